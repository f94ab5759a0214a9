param keysContainerName string

resource site 'Microsoft.Web/sites@2024-04-01' existing = {
  name: 'func'
}

var commonSettings = {
  IDEMPOTENCY_CONTAINER: keysContainerName
}

resource appSettings 'Microsoft.Web/sites/config@2024-04-01' = {
  parent: site
  name: 'appsettings'
  properties: commonSettings
}
