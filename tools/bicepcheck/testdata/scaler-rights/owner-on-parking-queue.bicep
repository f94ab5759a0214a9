// want: Service Bus Data Owner on "parkingQueueName": only the queue the trigger reads
param appPrincipalId string
param ordersQueueName string
param parkingQueueName string

var roles = {
  serviceBusDataOwner: '090c5cfd-751d-490a-894a-3ce6f1109419'
}

var app = {
  principalId: appPrincipalId
  principalType: 'ServicePrincipal'
}

var queueGrants = [
  {
    who: app
    queue: ordersQueueName
    role: roles.serviceBusDataOwner
  }
  {
    who: app
    queue: parkingQueueName
    role: roles.serviceBusDataOwner
  }
]
