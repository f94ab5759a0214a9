// want: IDEMPOTENCY_TTL: cmd/handler does not read it
param name string

resource site 'Microsoft.Web/sites@2024-04-01' existing = {
  name: name
}

resource appSettings 'Microsoft.Web/sites/config@2024-04-01' = {
  parent: site
  name: 'appsettings'
  properties: {
    COSMOS_ENDPOINT: 'https://cosmos.documents.azure.com:443/'
    IDEMPOTENCY_TTL: '24h'
  }
}
