// Cosmos DB for NoSQL account with key authentication switched off (Entra data-plane roles only),
// the shop database, the orders container, the change-feed lease container and the container of
// the HTTP API's idempotency keys.
// Serverless by default; Autoscale puts shared autoscale throughput on the database.
param name string
param location string
param tags object

@allowed([
  'Serverless'
  'Autoscale'
])
param capacityMode string = 'Serverless'

@minValue(1000)
param autoscaleMaxThroughput int = 1000

@allowed([
  'Enabled'
  'Disabled'
])
@description('Disabled when the account is reached through a private endpoint (main.bicep vnetEnabled).')
param publicNetworkAccess string = 'Enabled'

var serverless = capacityMode == 'Serverless'

resource account 'Microsoft.DocumentDB/databaseAccounts@2024-11-15' = {
  name: name
  location: location
  tags: tags
  kind: 'GlobalDocumentDB'
  properties: {
    databaseAccountOfferType: 'Standard'
    disableLocalAuth: true
    disableKeyBasedMetadataWriteAccess: true
    minimalTlsVersion: 'Tls12'
    publicNetworkAccess: publicNetworkAccess
    consistencyPolicy: {
      defaultConsistencyLevel: 'Session'
    }
    // One write region: create-as-claim is a uniqueness check within a write region only; with
    // several, two regions could each accept the same orderId and conflict resolution would drop
    // one accepted order silently (docs/adr/0014-single-write-region.md).
    enableMultipleWriteLocations: false
    // Point-in-time restore of any second of the last 30 days into a new account (a deleted
    // container, orders overwritten by a bug); USD 0.20/GB-month, ADR 0014 weighs it against 7
    // days. Restore: docs/runbook.md#restore-orders-from-continuous-backup.
    // Changing the tier: Azure refuses a PUT that changes it together with any other account
    // property ("Cannot update continuous backup mode and other properties at the same time",
    // Azure/bicep#15109). Deploy the tier change alone first, then the other changes.
    backupPolicy: {
      type: 'Continuous'
      continuousModeProperties: {
        tier: 'Continuous30Days'
      }
    }
    // One region. A serverless account cannot have another (learn.microsoft.com/azure/cosmos-db/
    // serverless; tools/bicepcheck rule cosmos-regions); a read region needs provisioned
    // throughput and what it buys and costs is in docs/adr/0014-single-write-region.md.
    locations: [
      {
        locationName: location
        failoverPriority: 0
        isZoneRedundant: false
      }
    ]
    capabilities: serverless ? [
      {
        name: 'EnableServerless'
      }
    ] : []
  }
}

resource database 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases@2024-11-15' = {
  parent: account
  name: 'shop'
  properties: {
    resource: {
      id: 'shop'
    }
    options: serverless ? {} : {
      autoscaleSettings: {
        maxThroughput: autoscaleMaxThroughput
      }
    }
  }
}

// id = partition key = orderId: the create-as-claim (docs/adr/0002-create-first.md) relies on
// Cosmos rejecting a second item with the same id in the same logical partition (409).
// defaultTtl -1 switches TTL on without expiring anything by default, so records that carry
// their own ttl (for example conflict records) expire and orders never do.
// Partition key version 2 hashes the whole value (order ids may be up to 255 characters; version
// 1 hashes only the first 100 bytes).
// Indexing: the consumer only does point reads and transactional-batch writes, and the
// publisher reads the change feed; neither uses the index. Cosmos DB charges a write by the
// terms it indexes, so the default (every path) makes each order, outbox event and conflict
// record pay for paths nothing queries. Only the two paths the tests' and operators' queries
// filter on stay indexed (cosmos.Store.PartitionDocuments: orderId; Documents: type);
// docs/cosmos-indexing.md has the before and after.
resource ordersContainer 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers@2024-11-15' = {
  parent: database
  name: 'orders'
  properties: {
    resource: {
      id: 'orders'
      partitionKey: {
        paths: [
          '/orderId'
        ]
        kind: 'Hash'
        version: 2
      }
      defaultTtl: -1
      indexingPolicy: {
        indexingMode: 'consistent'
        automatic: true
        includedPaths: [
          {
            path: '/orderId/?'
          }
          {
            path: '/type/?'
          }
        ]
        excludedPaths: [
          {
            path: '/*'
          }
        ]
      }
    }
  }
}

// Leases of the PublishOrderEvents change-feed trigger (createLeaseContainerIfNotExists is false:
// the app's data-plane role cannot create containers).
resource leasesContainer 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers@2024-11-15' = {
  parent: database
  name: 'leases'
  properties: {
    resource: {
      id: 'leases'
      partitionKey: {
        paths: [
          '/id'
        ]
        kind: 'Hash'
      }
    }
  }
}

// One record per Idempotency-Key of the HTTP API (SubmitOrder; docs/adr/0011-idempotency-
// key-scope-and-ttl.md). Its own container, not documents in orders: the orders container feeds
// the change feed (PublishOrderEvents would be invoked for every key record), and the keys have
// another partition key and another lifetime.
// id = partition key = hex SHA-256 of (client, operation, key): the claim is a create that Cosmos
// refuses with 409 when the key exists, like an order's create-as-claim (ADR 0002), and every
// other operation is a point operation on one logical partition.
// defaultTtl -1: TTL on, nothing expires by default; every record carries its own ttl
// (IDEMPOTENCY_KEY_TTL), so a deployment changes the window without touching the container.
// Indexing: claim, complete, take-over and release are point operations and no query reads the
// container (docs/adr/0012-http-api-decides-in-the-request.md), so no path is indexed: the
// policy Cosmos DB documents for a key-value container with TTL (id and _ts stay indexed).
resource idempotencyKeysContainer 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers@2024-11-15' = {
  parent: database
  name: 'idempotency-keys'
  properties: {
    resource: {
      id: 'idempotency-keys'
      partitionKey: {
        paths: [
          '/id'
        ]
        kind: 'Hash'
        version: 2
      }
      defaultTtl: -1
      indexingPolicy: {
        indexingMode: 'consistent'
        automatic: true
        includedPaths: []
        excludedPaths: [
          {
            path: '/*'
          }
        ]
      }
    }
  }
}

output name string = account.name
output endpoint string = account.properties.documentEndpoint
output databaseName string = database.name
output ordersContainerName string = ordersContainer.name
output leasesContainerName string = leasesContainer.name
output idempotencyContainerName string = idempotencyKeysContainer.name
