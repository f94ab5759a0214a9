// want: app setting MESSAGE_DEADLINE = "4 minutes": not a Go duration
param name string

resource site 'Microsoft.Web/sites@2024-04-01' existing = {
  name: name
}

resource appSettings 'Microsoft.Web/sites/config@2024-04-01' = {
  parent: site
  name: 'appsettings'
  properties: {
    MESSAGE_DEADLINE: '4 minutes'
  }
}
