// want: a parked body could outlive nothing that points at it

resource namespace 'Microsoft.ServiceBus/namespaces@2024-01-01' = {
  name: 'sb'
  location: 'westeurope'
  sku: {
    name: 'Standard'
    tier: 'Standard'
  }
  properties: {
    disableLocalAuth: true
  }
}

resource parkingQueue 'Microsoft.ServiceBus/namespaces/queues@2024-01-01' = {
  parent: namespace
  name: 'orders-deadletter'
  properties: {
    maxDeliveryCount: 10
    lockDuration: 'PT1M'
    deadLetteringOnMessageExpiration: false
    defaultMessageTimeToLive: 'P14D'
  }
}
