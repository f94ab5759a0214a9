// want: idempotency-keys: indexingPolicy includes /orderId/?, which no query filters on (queried: none, point operations only)
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

// The keys container still indexes /orderId/? for a lookup by order that no longer exists: every
// key operation is a point operation.
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
