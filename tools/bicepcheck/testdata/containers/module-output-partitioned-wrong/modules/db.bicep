resource account 'Microsoft.DocumentDB/databaseAccounts@2024-11-15' existing = {
  name: 'cosmos'
}

resource database 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases@2024-11-15' existing = {
  parent: account
  name: 'shop'
}

resource keysContainer 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers@2024-11-15' = {
  parent: database
  name: 'keys'
  properties: {
    resource: {
      id: 'keys'
      partitionKey: {
        paths: [
          '/orderId'
        ]
      }
      defaultTtl: -1
    }
  }
}

output keysName string = keysContainer.name
