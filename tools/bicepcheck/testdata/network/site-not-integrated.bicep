// want: site site has no virtualNetworkSubnetId
param flexConfig object

resource site 'Microsoft.Web/sites@2024-04-01' = {
  name: 'func'
  location: 'westeurope'
  kind: 'functionapp,linux'
  properties: {
    functionAppConfig: flexConfig
  }
}
