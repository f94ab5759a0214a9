// want: queue orders-retry is not declared in local/servicebus-config.json
resource namespace 'Microsoft.ServiceBus/namespaces@2024-01-01' existing = {
  name: 'sb'
}

resource retryQueue 'Microsoft.ServiceBus/namespaces/queues@2024-01-01' = {
  parent: namespace
  name: 'orders-retry'
  properties: {
    maxDeliveryCount: 10
    lockDuration: 'PT1M'
  }
}
