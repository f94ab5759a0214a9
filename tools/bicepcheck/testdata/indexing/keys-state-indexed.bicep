// want: idempotency-keys: indexingPolicy includes /state/?, which no query filters on (indexed: /orderId/?)
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
      indexingPolicy: {
        indexingMode: 'consistent'
        automatic: true
        includedPaths: [
          {
            path: '/orderId/?'
          }
        ]
        excludedPaths: [
          {
            path: '/*'
          }
        ]
      }
    }
  }
}

// The keys container indexes its state: no query filters on it.
resource keys 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers@2024-11-15' = {
  parent: db
  name: 'idempotency-keys'
  properties: {
    resource: {
      id: 'idempotency-keys'
      partitionKey: {
        paths: [
          '/id'
        ]
        kind: 'Hash'
      }
      defaultTtl: -1
      indexingPolicy: {
        indexingMode: 'consistent'
        includedPaths: [
          {
            path: '/orderId/?'
          }
          {
            path: '/state/?'
          }
        ]
        excludedPaths: [
          {
            path: '/*'
          }
        ]
      }
    }
  }
}
