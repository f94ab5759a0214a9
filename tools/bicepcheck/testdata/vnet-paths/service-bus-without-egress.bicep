// want: VNet mode has no path to Service Bus (namespace): no private endpoint (group namespace) and no NAT gateway
param vnetEnabled bool = true

resource namespace 'Microsoft.ServiceBus/namespaces@2024-01-01' = {
  name: 'sb'
  location: 'westeurope'
  sku: {
    name: 'Standard'
    tier: 'Standard'
  }
  properties: {
    publicNetworkAccess: 'Enabled'
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
          addressPrefix: '10.40.0.0/24'
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
    vnetRouteAllEnabled: true
  }
}
