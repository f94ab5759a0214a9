// want: IDEMPOTENCY_CONTAINER = toLower(keysName) is computed
param keysName string
param name string

resource site 'Microsoft.Web/sites@2024-04-01' existing = {
  name: name
}

resource appSettings 'Microsoft.Web/sites/config@2024-04-01' = {
  parent: site
  name: 'appsettings'
  properties: {
    IDEMPOTENCY_CONTAINER: toLower(keysName)
  }
}
