// want: properties.httpsOnly must be true
param name string

resource site 'Microsoft.Web/sites@2024-04-01' = {
  name: name
  location: 'westeurope'
  kind: 'functionapp,linux'
  properties: {
    httpsOnly: false
    siteConfig: {
      minTlsVersion: '1.2'
    }
  }
}
