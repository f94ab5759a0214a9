// want: SUBMIT_DEADLINE 20s plus the 5s that finish its key exceed IDEMPOTENCY_LEASE 15s
param name string

resource site 'Microsoft.Web/sites@2024-04-01' existing = {
  name: name
}

resource appSettings 'Microsoft.Web/sites/config@2024-04-01' = {
  parent: site
  name: 'appsettings'
  properties: {
    IDEMPOTENCY_KEY_TTL: '24h'
    IDEMPOTENCY_LEASE: '15s'
    SUBMIT_DEADLINE: '20s'
  }
}
