// want: SUBMIT_DEADLINE 6m0s exceeds the host's functionTimeout 5m0s: it may take at most 4m30s
param name string

resource site 'Microsoft.Web/sites@2024-04-01' existing = {
  name: name
}

resource appSettings 'Microsoft.Web/sites/config@2024-04-01' = {
  parent: site
  name: 'appsettings'
  properties: {
    IDEMPOTENCY_LEASE: '10m'
    SUBMIT_DEADLINE: '6m'
  }
}
