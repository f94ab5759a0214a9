// The whole order consumer in one resource group: a Linux function app running the Go custom
// handler, Service Bus (orders, parking queue, order-events topic), Cosmos DB for NoSQL, host
// storage, monitoring and alerts. Every connection is identity-based: the template creates no
// key, connection string or SAS, and outputs none.
//
// Deploy: see docs/deploy.md. Offline checks: tools/bicepcheck (syntax + policy rules).
// Write only the Bicep subset that tree-sitter-bicep 1.1.0 parses (bicep/README.md).
targetScope = 'resourceGroup'

@minLength(1)
@maxLength(20)
@description('Short environment name (dev, prod, ...). Part of every resource name; azd sets it from AZURE_ENV_NAME.')
param environmentName string

@description('Region for every resource. Defaults to the resource group region.')
@metadata({ azd: { type: 'location' } })
param location string = resourceGroup().location

@allowed([
  'ElasticPremium'
  'FlexConsumption'
])
@description('Hosting plan. ElasticPremium is the default; FlexConsumption runs the custom handler with runtime "custom" (docs/adr/0004-hosting-plan.md).')
param hostingPlan string = 'ElasticPremium'

@allowed([
  'EP1'
  'EP2'
  'EP3'
])
@description('Elastic Premium SKU (ignored on Flex Consumption).')
param elasticPremiumSku string = 'EP1'

// Linux Elastic Premium scales a plan out to 20 instances in every region; more needs a support
// request (learn.microsoft.com/azure/azure-functions/functions-premium-plan#region-max-scale-out).
@minValue(1)
@maxValue(20)
@description('Elastic Premium: most instances the plan may scale out to (Linux: at most 20 per plan without a support request).')
param maximumElasticWorkerCount int = 20

@allowed([
  2048
  4096
])
@description('Flex Consumption: memory of one instance in MB.')
param flexInstanceMemoryMB int = 2048

// Flex Consumption accepts 1 to 1000 (learn.microsoft.com/azure/azure-functions/event-driven-scaling
// #limit-scale-out, August 2026). Below 40 was rolled out region by region from January 2026
// (Azure/azure-functions-host#10523): a region that still refuses it answers at deployment.
@minValue(1)
@maxValue(1000)
@description('Flex Consumption: most on-demand instances per function group (1 to 1000; below 40 not yet in every region).')
param flexMaximumInstanceCount int = 40

@description('Service Bus duplicate detection window on the orders queue (ISO 8601, 20 seconds to 7 days). Duplicate detection itself cannot be switched on or off after the queue exists.')
param duplicateDetectionWindow string = 'PT10M'

@description('Peek-lock duration of the orders queue (ISO 8601, at most PT5M). The host renews locks for single-message functions; a batch must finish inside it.')
param lockDuration string = 'PT1M'

@allowed([
  'Serverless'
  'Autoscale'
])
@description('Cosmos DB capacity: Serverless (default) or autoscale throughput shared by the database.')
param cosmosCapacityMode string = 'Serverless'

@minValue(1000)
@description('Cosmos DB autoscale maximum RU/s for the database (Autoscale mode only).')
param cosmosAutoscaleMaxThroughput int = 1000

@minValue(30)
@maxValue(730)
@description('Log Analytics retention in days.')
param logRetentionDays int = 30

@description('E-mail address that receives the alerts. Empty: the alerts are created without an action group.')
param alertEmail string = ''

@description('Object id of the person or pipeline that publishes the app and operates the queues (azd sets AZURE_PRINCIPAL_ID). Empty: no data-plane roles for a deployer.')
param deployerPrincipalId string = ''

@allowed([
  'User'
  'ServicePrincipal'
  'Group'
])
@description('Principal type of deployerPrincipalId: User for a person, ServicePrincipal for CI (azd: AZURE_PRINCIPAL_TYPE).')
param deployerPrincipalType string = 'User'

@description('true: ProcessOrderBatch (cardinality many) reads the orders queue and ProcessOrder is switched off. false (default): the reverse.')
param enableBatchFunction bool = false

@description('true: private networking. A virtual network with the app\'s outbound integration, private endpoints and DNS zones for the host storage (blob, queue, table) and Cosmos DB, whose public network access is then off. Service Bus stays public (Standard tier; identity-only access), reached through a NAT gateway on the app subnet. Publishing and data-plane commands must then run from inside the network (docs/deploy.md#private-networking).')
param vnetEnabled bool = false

@description('HTTP API (SubmitOrder, GetOrder): Entra ID application (client) id of the API app registration callers get tokens for. Empty (default): callers authenticate with function keys only (docs/security.md#http-api). Set: App Service Authentication answers 401 to requests without a valid token, in front of the function keys, on both plans (on Flex Consumption verify it once: docs/deploy.md).')
param easyAuthClientId string = ''

@description('App Service Authentication: audiences a token may carry. Empty: api://<easyAuthClientId>.')
param easyAuthAllowedAudiences array = []

@description('App Service Authentication: client application ids allowed to call (one per partner). Empty: any application of the tenant that holds a token for the audience.')
param easyAuthAllowedClientApplications array = []

@description('Extra tags for every resource.')
param tags object = {}

var resourceToken = toLower(uniqueString(resourceGroup().id, environmentName))
var allTags = union(tags, { 'azd-env-name': environmentName })
var names = {
  identity: 'id-${resourceToken}'
  logAnalytics: 'log-${resourceToken}'
  appInsights: 'appi-${resourceToken}'
  storage: 'st${resourceToken}'
  serviceBus: 'sb-${resourceToken}'
  cosmos: 'cosmos-${resourceToken}'
  plan: 'plan-${resourceToken}'
  functionApp: 'func-${toLower(environmentName)}-${resourceToken}'
  actionGroup: 'ag-${resourceToken}'
  vnet: 'vnet-${resourceToken}'
}

var publicNetworkAccess = vnetEnabled ? 'Disabled' : 'Enabled'


module identity 'modules/identity.bicep' = {
  name: 'identity'
  params: {
    name: names.identity
    location: location
    tags: allTags
  }
}

module monitoring 'modules/monitoring.bicep' = {
  name: 'monitoring'
  params: {
    logAnalyticsName: names.logAnalytics
    appInsightsName: names.appInsights
    location: location
    tags: allTags
    retentionInDays: logRetentionDays
    serviceBusNamespaceId: resourceId('Microsoft.ServiceBus/namespaces', serviceBus.outputs.name)
  }
}

module storage 'modules/storage.bicep' = {
  name: 'storage'
  params: {
    name: names.storage
    location: location
    tags: allTags
    publicNetworkAccess: publicNetworkAccess
  }
}

module serviceBus 'modules/servicebus.bicep' = {
  name: 'servicebus'
  params: {
    name: names.serviceBus
    location: location
    tags: allTags
    duplicateDetectionWindow: duplicateDetectionWindow
    lockDuration: lockDuration
  }
}

module cosmos 'modules/cosmos.bicep' = {
  name: 'cosmos'
  params: {
    name: names.cosmos
    location: location
    tags: allTags
    capacityMode: cosmosCapacityMode
    autoscaleMaxThroughput: cosmosAutoscaleMaxThroughput
    publicNetworkAccess: publicNetworkAccess
  }
}

// After the role assignments: the Cosmos DB private endpoint, like each sqlRoleAssignment, takes
// the account's exclusive lock, and one started beside them fails the deployment with 412.
module network 'modules/network.bicep' = if (vnetEnabled) {
  name: 'network'
  dependsOn: [
    rbac
  ]
  params: {
    name: names.vnet
    location: location
    tags: allTags
    hostingPlan: hostingPlan
    storageAccountName: storage.outputs.name
    cosmosAccountName: cosmos.outputs.name
  }
}

// Roles first: the app's triggers start as soon as the site exists and need their data-plane
// access from the first minute (role assignments can take minutes to propagate anyway).
module rbac 'modules/rbac.bicep' = {
  name: 'rbac'
  params: {
    appPrincipalId: identity.outputs.principalId
    deployerPrincipalId: deployerPrincipalId
    deployerPrincipalType: deployerPrincipalType
    storageAccountName: storage.outputs.name
    packageContainerName: storage.outputs.packageContainerName
    serviceBusName: serviceBus.outputs.name
    ordersQueueName: serviceBus.outputs.ordersQueueName
    parkingQueueName: serviceBus.outputs.parkingQueueName
    eventsTopicName: serviceBus.outputs.eventsTopicName
    cosmosAccountName: cosmos.outputs.name
    cosmosDatabaseName: cosmos.outputs.databaseName
    cosmosOrdersContainerName: cosmos.outputs.ordersContainerName
    appInsightsName: monitoring.outputs.appInsightsName
  }
}

module functionApp 'modules/functionapp.bicep' = {
  name: 'functionapp'
  dependsOn: [
    rbac
  ]
  params: {
    name: names.functionApp
    planName: names.plan
    location: location
    tags: allTags
    hostingPlan: hostingPlan
    elasticPremiumSku: elasticPremiumSku
    maximumElasticWorkerCount: maximumElasticWorkerCount
    flexInstanceMemoryMB: flexInstanceMemoryMB
    flexMaximumInstanceCount: flexMaximumInstanceCount
    identityName: identity.outputs.name
    storageAccountName: storage.outputs.name
    packageContainerName: storage.outputs.packageContainerName
    appInsightsName: monitoring.outputs.appInsightsName
    serviceBusFullyQualifiedNamespace: serviceBus.outputs.fullyQualifiedNamespace
    cosmosEndpoint: cosmos.outputs.endpoint
    cosmosDatabaseName: cosmos.outputs.databaseName
    cosmosContainerName: cosmos.outputs.ordersContainerName
    idempotencyContainerName: cosmos.outputs.idempotencyContainerName
    easyAuthClientId: easyAuthClientId
    easyAuthAllowedAudiences: easyAuthAllowedAudiences
    easyAuthAllowedClientApplications: easyAuthAllowedClientApplications
    retryBudgetDeliveryCount: serviceBus.outputs.ordersMaxDeliveryCount - 1
    enableBatchFunction: enableBatchFunction
    appSubnetId: vnetEnabled ? network.outputs.appSubnetId : ''
  }
}

module alerts 'modules/alerts.bicep' = {
  name: 'alerts'
  params: {
    actionGroupName: names.actionGroup
    alertEmail: alertEmail
    tags: allTags
    location: location
    serviceBusName: serviceBus.outputs.name
    ordersQueueName: serviceBus.outputs.ordersQueueName
    parkingQueueName: serviceBus.outputs.parkingQueueName
    appInsightsName: monitoring.outputs.appInsightsName
  }
}

// Names and endpoints only. azd turns each output into an environment value (azd env get-value).
output AZURE_LOCATION string = location
output AZURE_TENANT_ID string = tenant().tenantId
output AZURE_FUNCTION_APP_NAME string = functionApp.outputs.name
output HOSTING_PLAN string = hostingPlan
output VNET_ENABLED bool = vnetEnabled
output SERVICEBUS_NAMESPACE string = serviceBus.outputs.name
output SERVICEBUS_FULLY_QUALIFIED_NAMESPACE string = serviceBus.outputs.fullyQualifiedNamespace
output SERVICEBUS_QUEUE string = serviceBus.outputs.ordersQueueName
output SERVICEBUS_PARKING_QUEUE string = serviceBus.outputs.parkingQueueName
output SERVICEBUS_EVENTS_TOPIC string = serviceBus.outputs.eventsTopicName
output COSMOS_ENDPOINT string = cosmos.outputs.endpoint
output COSMOS_DATABASE string = cosmos.outputs.databaseName
output COSMOS_CONTAINER string = cosmos.outputs.ordersContainerName
output IDEMPOTENCY_CONTAINER string = cosmos.outputs.idempotencyContainerName
output FUNCTION_APP_HOSTNAME string = functionApp.outputs.defaultHostName
output HTTP_AUTH string = functionApp.outputs.httpAuth
output STORAGE_ACCOUNT_NAME string = storage.outputs.name
output PACKAGE_CONTAINER string = storage.outputs.packageContainerName
output APPLICATIONINSIGHTS_NAME string = monitoring.outputs.appInsightsName
output LOG_ANALYTICS_WORKSPACE_NAME string = monitoring.outputs.logAnalyticsName
