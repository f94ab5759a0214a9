// want: VNet mode has no path to host storage (storage): its public endpoint is closed in VNet mode and it has no private endpoint (group blob)
param vnetEnabled bool = true

var publicNetworkAccess = vnetEnabled ? 'Disabled' : 'Enabled'

resource storage 'Microsoft.Storage/storageAccounts@2023-05-01' = {
  name: 'st'
  location: 'westeurope'
  kind: 'StorageV2'
  sku: {
    name: 'Standard_LRS'
  }
  properties: {
    publicNetworkAccess: publicNetworkAccess
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

resource endpoint 'Microsoft.Network/privateEndpoints@2023-11-01' = {
  name: 'pe-table'
  location: 'westeurope'
  properties: {
    privateLinkServiceConnections: [
      {
        name: 'table'
        properties: {
          privateLinkServiceId: storage.id
          groupIds: [
            'table'
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
