// want: Service Bus queue "orders-deadletter", which no .bicep file declares
resource ns 'Microsoft.ServiceBus/namespaces@2024-01-01' existing = {
  name: 'sb'
}

resource orders 'Microsoft.ServiceBus/namespaces/queues@2024-01-01' = {
  parent: ns
  name: 'orders'
}
