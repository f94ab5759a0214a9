// want: scoped to the whole Service Bus namespace
param principalId string

resource ns 'Microsoft.ServiceBus/namespaces@2024-01-01' existing = {
  name: 'sb'
}

resource receiver 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(ns.id, principalId)
  scope: ns
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', '4f6d3b9b-027b-4f4c-9142-0e5a2a2247e0')
    principalId: principalId
    principalType: 'ServicePrincipal'
  }
}
