// Every role assignment of the system, each on the narrowest scope that works.
//
// The app identity gets: Data Owner on the orders queue only (the trigger's target-based scaler
// needs the Manage right; docs/adr/0008-service-bus-data-owner-for-scaling.md); Sender on the parking queue and the
// events topic only; the Cosmos DB built-in Data Contributor on the shop database (data plane,
// covers the orders, leases and idempotency-keys containers: a role scoped to /dbs/<database>
// covers every container in it; no control-plane role, so it cannot create or delete
// containers); Blob Data Owner + Table Data Contributor on its own host storage account; and
// Monitoring Metrics Publisher on the Application Insights component.
//
// The optional deployer (a person or pipeline) gets what publishing and the runbook need:
// Blob Data Contributor on the package container only (upload packages; the host's own blobs
// and the rest of the account stay out of reach), Sender on the orders queue (test
// and resubmitted messages), Receiver on the orders queue (its broker dead-letter queue) and on
// the parking queue (inspect and settle parked messages), the Cosmos DB built-in Data Reader on
// the shop database (order show, parked show), and a custom Cosmos DB role that can only delete
// items, on the orders container only: `ordersctl parked complete|resubmit` deletes the parked
// bodies of the envelopes it settles (they never expire, ADR 0013). Built-in Data Contributor
// would also let an operator create and overwrite orders beside the consumer; Cosmos DB roles
// cannot be scoped below a container, so the delete covers every item of orders.
//
// The ids are Azure built-in role definitions (tools/bicepcheck rejects any other GUID), but for
// the custom role's, a guid() of the account and container.
param appPrincipalId string
param deployerPrincipalId string
param deployerPrincipalType string
param storageAccountName string
param packageContainerName string
param serviceBusName string
param ordersQueueName string
param parkingQueueName string
param eventsTopicName string
param cosmosAccountName string
param cosmosDatabaseName string
param cosmosOrdersContainerName string
param appInsightsName string

var roles = {
  serviceBusDataOwner: '090c5cfd-751d-490a-894a-3ce6f1109419'
  serviceBusDataReceiver: '4f6d3b9b-027b-4f4c-9142-0e5a2a2247e0'
  serviceBusDataSender: '69a216fc-b8fb-44d8-bc22-1f3c2cd27a39'
  storageBlobDataOwner: 'b7e6dc6d-f1e8-4753-8033-0f276bb0955b'
  storageBlobDataContributor: 'ba92f5b4-2d11-453d-a403-e96b0029c9fe'
  storageTableDataContributor: '0a9a7e1f-b9d0-4cc4-a60d-0319b160aaa3'
  monitoringMetricsPublisher: '3913510d-42f4-4e42-8a64-420c390055eb'
}

// Cosmos DB data-plane role definitions live under the account, not in Microsoft.Authorization.
var cosmosRoles = {
  cosmosDataReader: '00000000-0000-0000-0000-000000000001'
  cosmosDataContributor: '00000000-0000-0000-0000-000000000002'
}

var hasDeployer = !empty(deployerPrincipalId)

var app = {
  principalId: appPrincipalId
  principalType: 'ServicePrincipal'
}
var deployer = {
  principalId: deployerPrincipalId
  principalType: deployerPrincipalType
}

// Who gets which role where: one table per kind of scope.
// The app's grant on the queue it triggers on is Data Owner, not Receiver: the Service Bus
// extension's target-based scaler reads the queue's runtime properties (message count), which
// needs Manage. With Receiver only the scaler reports itself unsupported and the fallback sees
// at most one message, so a backlog scales out far too slowly (ADR 0008). Scoped to this one
// queue, Manage cannot touch any other entity of the namespace.
var queueGrants = concat([
  {
    who: app
    queue: ordersQueueName
    role: roles.serviceBusDataOwner
  }
  {
    who: app
    queue: parkingQueueName
    role: roles.serviceBusDataSender
  }
], hasDeployer ? [
  {
    who: deployer
    queue: ordersQueueName
    role: roles.serviceBusDataSender
  }
  {
    who: deployer
    queue: ordersQueueName
    role: roles.serviceBusDataReceiver
  }
  {
    who: deployer
    queue: parkingQueueName
    role: roles.serviceBusDataReceiver
  }
] : [])

// Table Data Contributor: the host persists its diagnostic events in table storage.
var storageGrants = concat([
  {
    who: app
    role: roles.storageBlobDataOwner
  }
  {
    who: app
    role: roles.storageTableDataContributor
  }
])

// Cosmos DB data-plane scopes are paths under the account, not ARM ids: the database, or with a
// grant's path one container of it.
var cosmosOrdersPath = '/colls/${cosmosOrdersContainerName}'
var cosmosOrdersScope = '${cosmosAccount.id}/dbs/${cosmosDatabaseName}/colls/${cosmosOrdersContainerName}'

// The custom role's name: a GUID, stable across deployments.
var parkedBodyDeleterRole = guid(cosmosAccount.id, cosmosOrdersScope, 'parked-body-deleter')

var cosmosGrants = concat([
  {
    who: app
    role: cosmosRoles.cosmosDataContributor
    path: ''
  }
], hasDeployer ? [
  {
    who: deployer
    role: cosmosRoles.cosmosDataReader
    path: ''
  }
  {
    who: deployer
    role: parkedBodyDeleterRole
    path: cosmosOrdersPath
  }
] : [])

resource storage 'Microsoft.Storage/storageAccounts@2023-05-01' existing = {
  name: storageAccountName
}

resource blobService 'Microsoft.Storage/storageAccounts/blobServices@2023-05-01' existing = {
  parent: storage
  name: 'default'
}

resource packageContainer 'Microsoft.Storage/storageAccounts/blobServices/containers@2023-05-01' existing = {
  parent: blobService
  name: packageContainerName
}

resource namespace 'Microsoft.ServiceBus/namespaces@2024-01-01' existing = {
  name: serviceBusName
}

resource grantedQueues 'Microsoft.ServiceBus/namespaces/queues@2024-01-01' existing = [for g in queueGrants: {
  parent: namespace
  name: g.queue
}]

resource eventsTopic 'Microsoft.ServiceBus/namespaces/topics@2024-01-01' existing = {
  parent: namespace
  name: eventsTopicName
}

resource cosmosAccount 'Microsoft.DocumentDB/databaseAccounts@2024-11-15' existing = {
  name: cosmosAccountName
}

resource appInsights 'Microsoft.Insights/components@2020-02-02' existing = {
  name: appInsightsName
}

resource queueRoleAssignments 'Microsoft.Authorization/roleAssignments@2022-04-01' = [for (g, i) in queueGrants: {
  name: guid(grantedQueues[i].id, g.who.principalId, g.role)
  scope: grantedQueues[i]
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', g.role)
    principalId: g.who.principalId
    principalType: g.who.principalType
  }
}]

resource storageRoleAssignments 'Microsoft.Authorization/roleAssignments@2022-04-01' = [for g in storageGrants: {
  name: guid(storage.id, g.who.principalId, g.role)
  scope: storage
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', g.role)
    principalId: g.who.principalId
    principalType: g.who.principalType
  }
}]

resource deployerPackageWriter 'Microsoft.Authorization/roleAssignments@2022-04-01' = if (hasDeployer) {
  name: guid(packageContainer.id, deployerPrincipalId, roles.storageBlobDataContributor)
  scope: packageContainer
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.storageBlobDataContributor)
    principalId: deployerPrincipalId
    principalType: deployerPrincipalType
  }
}

resource appEventsSender 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(eventsTopic.id, appPrincipalId, roles.serviceBusDataSender)
  scope: eventsTopic
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.serviceBusDataSender)
    principalId: appPrincipalId
    principalType: 'ServicePrincipal'
  }
}

resource appMetricsPublisher 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(appInsights.id, appPrincipalId, roles.monitoringMetricsPublisher)
  scope: appInsights
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.monitoringMetricsPublisher)
    principalId: appPrincipalId
    principalType: 'ServicePrincipal'
  }
}

// Delete only (and the metadata every data-plane request of the SDK reads first); ordersctl
// finds the bodies with the Data Reader's query. Cosmos DB's role-based access control has no
// notDataActions: what is not listed is refused.
resource parkedBodyDeleter 'Microsoft.DocumentDB/databaseAccounts/sqlRoleDefinitions@2024-11-15' = if (hasDeployer) {
  parent: cosmosAccount
  name: parkedBodyDeleterRole
  properties: {
    roleName: 'Parked body deleter (${cosmosDatabaseName}/${cosmosOrdersContainerName})'
    type: 'CustomRole'
    assignableScopes: [
      cosmosOrdersScope
    ]
    permissions: [
      {
        dataActions: [
          'Microsoft.DocumentDB/databaseAccounts/readMetadata'
          'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers/items/delete'
        ]
      }
    ]
  }
}

// Cosmos DB data-plane roles: the role definition lives under the account, and the scope is a
// data-plane path, /dbs/<database> or /dbs/<database>/colls/<container> (not the ARM
// sqlDatabases path). No principalType here.
// One at a time, after the custom role exists: Cosmos DB takes an account-wide exclusive lock per
// role assignment and refuses a parallel one with 412 (tools/bicepcheck rule first-deploy).
@batchSize(1)
resource cosmosRoleAssignments 'Microsoft.DocumentDB/databaseAccounts/sqlRoleAssignments@2024-11-15' = [for g in cosmosGrants: {
  parent: cosmosAccount
  name: guid(cosmosAccount.id, cosmosDatabaseName, g.who.principalId, g.role)
  properties: {
    roleDefinitionId: '${cosmosAccount.id}/sqlRoleDefinitions/${g.role}'
    principalId: g.who.principalId
    scope: '${cosmosAccount.id}/dbs/${cosmosDatabaseName}${g.path}'
  }
  dependsOn: [
    parkedBodyDeleter
  ]
}]
