// want: no grant gives the app Service Bus Data Owner
param appPrincipalId string
param ordersQueueName string

var roles = {
  serviceBusDataReceiver: '4f6d3b9b-027b-4f4c-9142-0e5a2a2247e0'
}

var app = {
  principalId: appPrincipalId
  principalType: 'ServicePrincipal'
}

var queueGrants = [
  {
    who: app
    queue: ordersQueueName
    role: roles.serviceBusDataReceiver
  }
]
