// want: siteConfig is chosen by "strict", not by the hosting plan
param strict bool
param flexConfig object

resource site 'Microsoft.Web/sites@2024-04-01' = {
  name: 'func'
  location: 'westeurope'
  kind: 'functionapp,linux'
  properties: {
    functionAppConfig: flexConfig
    siteConfig: strict ? {
      minTlsVersion: '1.2'
      ftpsState: 'Disabled'
    } : {
      minTlsVersion: '1.2'
    }
  }
}
