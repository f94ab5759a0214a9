// want: app setting COSMOS_ENDPOINT is missing: cmd/handler requires it
param name string

resource site 'Microsoft.Web/sites@2024-04-01' existing = {
  name: name
}

resource appSettings 'Microsoft.Web/sites/config@2024-04-01' = {
  parent: site
  name: 'appsettings'
  properties: {
    COSMOS_DATABASE: 'shop'
  }
}
