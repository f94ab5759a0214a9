// The network module (with the Cosmos DB private endpoint) starts beside the role assignments.
param principalIds array

module rbac 'modules/rbac.bicep' = {
  name: 'rbac'
  params: {
    principalIds: principalIds
  }
}

module network 'modules/network.bicep' = {
  name: 'network'
}
