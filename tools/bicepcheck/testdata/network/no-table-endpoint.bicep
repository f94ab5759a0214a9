// want: no private endpoint for group "table"
param location string
param storageId string

var endpoints = [
  {
    name: 'blob'
    groupId: 'blob'
  }
  {
    name: 'queue'
    groupId: 'queue'
  }
  {
    name: 'cosmos'
    groupId: 'Sql'
  }
]

resource pes 'Microsoft.Network/privateEndpoints@2023-11-01' = [for e in endpoints: {
  name: 'pe-${e.name}'
  location: location
  properties: {
    subnet: {
      id: 'subnet'
    }
    privateLinkServiceConnections: [
      {
        name: e.name
        properties: {
          privateLinkServiceId: storageId
          groupIds: [
            e.groupId
          ]
        }
      }
    ]
  }
}]
