// want: VNet mode has no path to Service Bus (namespace): no private endpoint (group namespace) and no NAT gateway
resource namespace 'Microsoft.ServiceBus/namespaces@2024-01-01' = {
  name: 'sb'
  location: 'westeurope'
  sku: {
    name: 'Standard'
  }
}

resource nat 'Microsoft.Network/natGateways@2023-11-01' = {
  name: 'nat'
  location: 'westeurope'
  sku: {
    name: 'Standard'
  }
}

resource vnet 'Microsoft.Network/virtualNetworks@2023-11-01' = {
  name: 'vnet'
  location: 'westeurope'
  properties: {
    subnets: [
      {
        name: 'app'
        properties: {
          delegations: [
            {
              name: 'app'
              properties: {
                serviceName: 'Microsoft.App/environments'
              }
            }
          ]
        }
      }
      {
        name: 'jumpbox'
        properties: {
          natGateway: {
            id: nat.id
          }
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
