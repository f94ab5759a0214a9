// want: add @batchSize(1)
param principalIds array

resource account 'Microsoft.DocumentDB/databaseAccounts@2024-11-15' existing = {
  name: 'cosmos'
}

resource cosmosRoleAssignments 'Microsoft.DocumentDB/databaseAccounts/sqlRoleAssignments@2024-11-15' = [for id in principalIds: {
  parent: account
  name: guid(account.id, id)
  properties: {
    roleDefinitionId: '${account.id}/sqlRoleDefinitions/00000000-0000-0000-0000-000000000002'
    principalId: id
    scope: '${account.id}/dbs/shop'
  }
}]
