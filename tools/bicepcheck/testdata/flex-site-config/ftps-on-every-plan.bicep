// want: sends siteConfig.ftpsState to Flex Consumption
param isFlex bool
param flexConfig object

resource site 'Microsoft.Web/sites@2024-04-01' = {
  name: 'func'
  location: 'westeurope'
  kind: 'functionapp,linux'
  properties: {
    functionAppConfig: isFlex ? flexConfig : null
    siteConfig: {
      minTlsVersion: '1.2'
      ftpsState: 'Disabled'
    }
  }
}
