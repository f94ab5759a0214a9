// want: backupPolicy must be Continuous
resource account 'Microsoft.DocumentDB/databaseAccounts@2024-11-15' = {
  name: 'cosmos'
  location: 'westeurope'
  kind: 'GlobalDocumentDB'
  properties: {
    databaseAccountOfferType: 'Standard'
    disableLocalAuth: true
    enableMultipleWriteLocations: false
    backupPolicy: {
      type: 'Periodic'
      continuousModeProperties: {
        tier: 'Continuous30Days'
      }
    }
    locations: [
      {
        locationName: 'westeurope'
        failoverPriority: 0
      }
    ]
  }
}
