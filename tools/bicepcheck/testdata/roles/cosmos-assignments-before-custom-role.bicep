// want: Cosmos DB role assignments cosmosRoleAssignments do not depend on the custom role operatorRole
param operatorId string

resource account 'Microsoft.DocumentDB/databaseAccounts@2024-11-15' existing = {
  name: 'cosmos'
}

resource operatorRole 'Microsoft.DocumentDB/databaseAccounts/sqlRoleDefinitions@2024-11-15' = {
  parent: account
  name: guid(account.id, 'operator')
  properties: {
    roleName: 'Operator'
    type: 'CustomRole'
    assignableScopes: [
      '${account.id}/dbs/shop/colls/orders'
    ]
    permissions: [
      {
        dataActions: [
          'Microsoft.DocumentDB/databaseAccounts/readMetadata'
          'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers/items/delete'
        ]
      }
    ]
  }
}

@batchSize(1)
resource cosmosRoleAssignments 'Microsoft.DocumentDB/databaseAccounts/sqlRoleAssignments@2024-11-15' = [for id in [operatorId]: {
  parent: account
  name: guid(account.id, id)
  properties: {
    roleDefinitionId: operatorRole.id
    principalId: id
    scope: '${account.id}/dbs/shop/colls/orders'
  }
}]
