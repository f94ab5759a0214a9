// want: column
resource ns 'Microsoft.ServiceBus/namespaces@2024-01-01' = {
  name: 'sb'
  properties: {
    disableLocalAuth: true

param next string
