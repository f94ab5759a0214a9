// want: Service Bus Data Owner goes to "deployer"
param appPrincipalId string
param deployerPrincipalId string
param ordersQueueName string

var roles = {
  serviceBusDataOwner: '090c5cfd-751d-490a-894a-3ce6f1109419'
}

var app = {
  principalId: appPrincipalId
  principalType: 'ServicePrincipal'
}

var deployer = {
  principalId: deployerPrincipalId
  principalType: 'User'
}

var queueGrants = [
  {
    who: app
    queue: ordersQueueName
    role: roles.serviceBusDataOwner
  }
  {
    who: deployer
    queue: ordersQueueName
    role: roles.serviceBusDataOwner
  }
]
