// want: Microsoft.DocumentDB/databaseAccounts account: properties.disableLocalAuth must be true
resource account 'Microsoft.DocumentDB/databaseAccounts@2024-11-15' = {
  name: 'cosmos'
  location: 'westeurope'
  properties: {
    databaseAccountOfferType: 'Standard'
  }
}
