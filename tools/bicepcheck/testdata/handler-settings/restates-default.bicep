// want: app setting IDEMPOTENCY_LEASE = "1m" restates the handler's default
param name string

resource site 'Microsoft.Web/sites@2024-04-01' existing = {
  name: name
}

resource appSettings 'Microsoft.Web/sites/config@2024-04-01' = {
  parent: site
  name: 'appsettings'
  properties: {
    IDEMPOTENCY_LEASE: '1m'
  }
}
