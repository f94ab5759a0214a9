// want: no Service Bus queue named "orders"
resource ns 'Microsoft.ServiceBus/namespaces@2024-01-01' existing = {
  name: 'sb'
}

resource orders 'Microsoft.ServiceBus/namespaces/queues@2024-01-01' = {
  parent: ns
  name: 'order'
  properties: {
    requiresDuplicateDetection: true
  }
}
