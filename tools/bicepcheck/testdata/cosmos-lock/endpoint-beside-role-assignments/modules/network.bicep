resource cosmos 'Microsoft.DocumentDB/databaseAccounts@2024-11-15' existing = {
  name: 'cosmos'
}

resource cosmosEndpoint 'Microsoft.Network/privateEndpoints@2023-11-01' = {
  name: 'pe-cosmos'
  location: 'westeurope'
  properties: {
    subnet: {
      id: 'subnet'
    }
    privateLinkServiceConnections: [
      {
        name: 'cosmos'
        properties: {
          privateLinkServiceId: cosmos.id
          groupIds: [
            'Sql'
          ]
        }
      }
    ]
  }
}
