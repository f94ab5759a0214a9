// want: VNet mode has no path to Cosmos DB (account): its public endpoint is closed in VNet mode and it has no private endpoint (group Sql)
resource account 'Microsoft.DocumentDB/databaseAccounts@2024-11-15' = {
  name: 'cosmos'
  location: 'westeurope'
  properties: {
    databaseAccountOfferType: 'Standard'
    publicNetworkAccess: 'Disabled'
    locations: [
      {
        locationName: 'westeurope'
      }
    ]
  }
}

resource nat 'Microsoft.Network/natGateways@2023-11-01' = {
  name: 'nat'
  location: 'westeurope'
}

resource vnet 'Microsoft.Network/virtualNetworks@2023-11-01' = {
  name: 'vnet'
  location: 'westeurope'
  properties: {
    subnets: [
      {
        name: 'app'
        properties: {
          natGateway: {
            id: nat.id
          }
          delegations: [
            {
              name: 'app'
              properties: {
                serviceName: 'Microsoft.Web/serverFarms'
              }
            }
          ]
        }
      }
    ]
  }
}

resource site 'Microsoft.Web/sites@2024-04-01' = {
  name: 'func'
  location: 'westeurope'
  properties: {
    virtualNetworkSubnetId: resourceId('Microsoft.Network/virtualNetworks/subnets', vnet.name, 'app')
  }
}
