// want: the orders container has no indexingPolicy
resource db 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases@2024-11-15' existing = {
  name: 'cosmos/shop'
}

resource orders 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers@2024-11-15' = {
  parent: db
  name: 'orders'
  properties: {
    resource: {
      id: 'orders'
      partitionKey: {
        paths: [
          '/orderId'
        ]
        kind: 'Hash'
        version: 2
      }
      defaultTtl: -1
    }
  }
}
