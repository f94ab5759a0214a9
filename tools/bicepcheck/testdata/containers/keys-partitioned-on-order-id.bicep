// want: container "idempotency-keys" (IDEMPOTENCY_CONTAINER) is partitioned on [/orderId], want [/id]
param name string

resource site 'Microsoft.Web/sites@2024-04-01' existing = {
  name: name
}

resource appSettings 'Microsoft.Web/sites/config@2024-04-01' = {
  parent: site
  name: 'appsettings'
  properties: {
    IDEMPOTENCY_CONTAINER: 'idempotency-keys'
  }
}

resource account 'Microsoft.DocumentDB/databaseAccounts@2024-11-15' = {
  name: 'cosmos'
  location: 'westeurope'
  properties: {
    disableLocalAuth: true
  }
}

resource database 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases@2024-11-15' = {
  parent: account
  name: 'shop'
  properties: {
    resource: {
      id: 'shop'
    }
  }
}

resource keys 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers@2024-11-15' = {
  parent: database
  name: 'idempotency-keys'
  properties: {
    resource: {
      id: 'idempotency-keys'
      partitionKey: {
        paths: [
          '/orderId'
        ]
        kind: 'Hash'
      }
      defaultTtl: -1
    }
  }
}

resource appData 'Microsoft.DocumentDB/databaseAccounts/sqlRoleAssignments@2024-11-15' = {
  parent: account
  name: guid(account.id, 'app')
  properties: {
    roleDefinitionId: '${account.id}/sqlRoleDefinitions/00000000-0000-0000-0000-000000000002'
    principalId: '11111111-2222-3333-4444-555555555555'
    scope: '${account.id}/dbs/shop'
  }
}
