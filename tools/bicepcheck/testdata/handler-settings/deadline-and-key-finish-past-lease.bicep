// want: SUBMIT_DEADLINE 23s plus the 5s that finish its key exceed IDEMPOTENCY_LEASE 30s: together they may take at most 27s (90%)
param name string

resource site 'Microsoft.Web/sites@2024-04-01' existing = {
  name: name
}

resource appSettings 'Microsoft.Web/sites/config@2024-04-01' = {
  parent: site
  name: 'appsettings'
  properties: {
    IDEMPOTENCY_KEY_TTL: '24h'
    IDEMPOTENCY_LEASE: '30s'
    SUBMIT_DEADLINE: '23s'
  }
}
