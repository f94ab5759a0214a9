// want: allowSharedKeyAccess must be false
resource st 'Microsoft.Storage/storageAccounts@2023-05-01' = {
  name: 'st'
  location: 'westeurope'
  kind: 'StorageV2'
  sku: {
    name: 'Standard_LRS'
  }
  properties: {
    allowSharedKeyAccess: true
  }
}
