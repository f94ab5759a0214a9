// want: may be serverless (capability EnableServerless) but declares locations
param serverless bool = true

var primary = {
  locationName: 'westeurope'
  failoverPriority: 0
}

resource account 'Microsoft.DocumentDB/databaseAccounts@2024-11-15' = {
  name: 'cosmos'
  location: 'westeurope'
  properties: {
    databaseAccountOfferType: 'Standard'
    locations: serverless ? [
      primary
      {
        locationName: 'northeurope'
        failoverPriority: 1
      }
    ] : [
      primary
    ]
    capabilities: serverless ? [
      {
        name: 'EnableServerless'
      }
    ] : []
  }
}
