// want: may be serverless (capability EnableServerless) but declares locations
param serverless bool = true

resource account 'Microsoft.DocumentDB/databaseAccounts@2024-11-15' = {
  name: 'cosmos'
  location: 'westeurope'
  properties: {
    databaseAccountOfferType: 'Standard'
    enableAutomaticFailover: true
    locations: [
      {
        locationName: 'westeurope'
        failoverPriority: 0
      }
      {
        locationName: 'northeurope'
        failoverPriority: 1
      }
    ]
    capabilities: serverless ? [
      {
        name: 'EnableServerless'
      }
    ] : []
  }
}
