// The app's user-assigned managed identity: one principal for host storage, Service Bus,
// Cosmos DB and Application Insights. User-assigned (not system-assigned) so the role
// assignments can be created before the site exists and survive a re-created site.
param name string
param location string
param tags object

resource identity 'Microsoft.ManagedIdentity/userAssignedIdentities@2023-01-31' = {
  name: name
  location: location
  tags: tags
}

output name string = identity.name
output id string = identity.id
output clientId string = identity.properties.clientId
output principalId string = identity.properties.principalId
