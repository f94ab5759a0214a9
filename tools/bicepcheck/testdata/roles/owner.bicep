// want: 8e3af657-a8ff-443c-a75c-2fe8c4bcb635 is not one of the built-in roles
param principalId string

resource st 'Microsoft.Storage/storageAccounts@2023-05-01' existing = {
  name: 'st'
}

resource owner 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(st.id, principalId, 'owner')
  scope: st
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', '8e3af657-a8ff-443c-a75c-2fe8c4bcb635')
    principalId: principalId
    principalType: 'ServicePrincipal'
  }
}
