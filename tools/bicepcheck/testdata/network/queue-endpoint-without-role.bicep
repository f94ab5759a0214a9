// want: drop the endpoint or grant the role
param vnetEnabled bool
param storageId string

resource queueEndpoint 'Microsoft.Network/privateEndpoints@2023-11-01' = if (vnetEnabled) {
  name: 'pe-queue'
  location: 'westeurope'
  properties: {
    subnet: {
      id: 'subnet'
    }
    privateLinkServiceConnections: [
      {
        name: 'queue'
        properties: {
          privateLinkServiceId: storageId
          groupIds: [
            'queue'
          ]
        }
      }
    ]
  }
}
