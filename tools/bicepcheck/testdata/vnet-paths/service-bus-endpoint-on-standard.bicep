// want: has a private endpoint (group namespace) but is not Premium
resource namespace 'Microsoft.ServiceBus/namespaces@2024-01-01' = {
  name: 'sb'
  location: 'westeurope'
  sku: {
    name: 'Standard'
  }
  properties: {
    publicNetworkAccess: 'Disabled'
  }
}

resource endpoint 'Microsoft.Network/privateEndpoints@2023-11-01' = {
  name: 'pe-sb'
  location: 'westeurope'
  properties: {
    privateLinkServiceConnections: [
      {
        name: 'sb'
        properties: {
          privateLinkServiceId: namespace.id
          groupIds: [
            'namespace'
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
    virtualNetworkSubnetId: 'subnet'
  }
}
