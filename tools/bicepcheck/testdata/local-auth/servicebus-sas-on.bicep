// want: disableLocalAuth must be true
resource ns 'Microsoft.ServiceBus/namespaces@2024-01-01' = {
  name: 'sb'
  location: 'westeurope'
  properties: {
    disableLocalAuth: false
  }
}
