// want: lease container "leases" must be partitioned on /id
resource db 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases@2024-11-15' existing = {
  name: 'cosmos/shop'
}

resource leases 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers@2024-11-15' = {
  parent: db
  name: 'leases'
  properties: {
    resource: {
      id: 'leases'
      partitionKey: {
        paths: [
          '/partitionKey'
        ]
      }
    }
  }
}
