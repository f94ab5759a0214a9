// Host storage for the function app. Shared-key access is off: the host reaches it through
// the managed identity (AzureWebJobsStorage__accountName/__credential/__clientId), and so do
// the package deployments (Elastic Premium: run from a package blob read with the identity;
// Flex Consumption: the deployment container). There is deliberately no Azure Files content
// share: it only works with an account key (docs/adr/0004-hosting-plan.md).
param name string
param location string
param tags object

@allowed([
  'Enabled'
  'Disabled'
])
@description('Disabled when the account is reached through private endpoints (main.bicep vnetEnabled).')
param publicNetworkAccess string = 'Enabled'

@description('Blob container that holds the app packages: releases/<version>.zip and current.zip on Elastic Premium, the Flex Consumption deployment package otherwise.')
param packageContainerName string = 'app-package'

resource account 'Microsoft.Storage/storageAccounts@2023-05-01' = {
  name: name
  location: location
  tags: tags
  kind: 'StorageV2'
  sku: {
    name: 'Standard_LRS'
  }
  properties: {
    allowSharedKeyAccess: false
    allowBlobPublicAccess: false
    defaultToOAuthAuthentication: true
    minimumTlsVersion: 'TLS1_2'
    supportsHttpsTrafficOnly: true
    publicNetworkAccess: publicNetworkAccess
    networkAcls: {
      defaultAction: publicNetworkAccess == 'Disabled' ? 'Deny' : 'Allow'
      bypass: 'None'
    }
  }
}

resource blobService 'Microsoft.Storage/storageAccounts/blobServices@2023-05-01' = {
  parent: account
  name: 'default'
}

resource packageContainer 'Microsoft.Storage/storageAccounts/blobServices/containers@2023-05-01' = {
  parent: blobService
  name: packageContainerName
  properties: {
    publicAccess: 'None'
  }
}

output name string = account.name
output blobEndpoint string = account.properties.primaryEndpoints.blob
output packageContainerName string = packageContainer.name
