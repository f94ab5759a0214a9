// want: IDEMPOTENCY_KEY_TTL (30s) must be at least IDEMPOTENCY_LEASE (1m0s)
param name string

resource site 'Microsoft.Web/sites@2024-04-01' existing = {
  name: name
}

resource appSettings 'Microsoft.Web/sites/config@2024-04-01' = {
  parent: site
  name: 'appsettings'
  properties: {
    IDEMPOTENCY_KEY_TTL: '30s'
    IDEMPOTENCY_LEASE: '60s'
    SUBMIT_DEADLINE: '20s'
  }
}
