// The function app (Linux, custom handler bin/handler) and its plan.
//
// App settings live in the object variables *Settings below (tools/bicepcheck reads them and
// compares them with every function.json). They hold names, endpoints and client ids only:
// every connection authenticates as the user-assigned identity.
param name string
param planName string
param location string
param tags object

@allowed([
  'ElasticPremium'
  'FlexConsumption'
])
param hostingPlan string
param elasticPremiumSku string
param maximumElasticWorkerCount int
param flexInstanceMemoryMB int
param flexMaximumInstanceCount int

param identityName string
param storageAccountName string
param packageContainerName string
param appInsightsName string
param serviceBusFullyQualifiedNamespace string
param cosmosEndpoint string
param cosmosDatabaseName string
param cosmosContainerName string
param idempotencyContainerName string

@description('Entra ID application (client) id of the API app registration callers get tokens for. Empty: no App Service Authentication, callers present function keys only.')
param easyAuthClientId string = ''

@description('Audiences a token may carry (App Service Authentication only). Empty: api://<easyAuthClientId>.')
param easyAuthAllowedAudiences array = []

@description('Client application ids allowed to call (App Service Authentication only). Empty: any application of the tenant that holds a token for the audience.')
param easyAuthAllowedClientApplications array = []

@description('The handler parks a message as RetryBudgetExhausted once DeliveryCount reaches this value: one below the orders queue maxDeliveryCount.')
param retryBudgetDeliveryCount int

@description('true: ProcessOrderBatch (cardinality many) reads the orders queue and ProcessOrder is off. false: the reverse.')
param enableBatchFunction bool

@description('Subnet for outbound VNet integration (main.bicep vnetEnabled); empty: none.')
param appSubnetId string = ''

var vnetIntegrated = !empty(appSubnetId)

var isFlex = hostingPlan == 'FlexConsumption'

resource identity 'Microsoft.ManagedIdentity/userAssignedIdentities@2023-01-31' existing = {
  name: identityName
}

resource storage 'Microsoft.Storage/storageAccounts@2023-05-01' existing = {
  name: storageAccountName
}

resource appInsights 'Microsoft.Insights/components@2020-02-02' existing = {
  name: appInsightsName
}

var packageContainerUrl = '${storage.properties.primaryEndpoints.blob}${packageContainerName}'

// Settings for every plan.
var commonSettings = {
  AzureWebJobsStorage__accountName: storage.name
  AzureWebJobsStorage__credential: 'managedidentity'
  AzureWebJobsStorage__clientId: identity.properties.clientId
  APPLICATIONINSIGHTS_CONNECTION_STRING: appInsights.properties.ConnectionString
  APPLICATIONINSIGHTS_AUTHENTICATION_STRING: 'ClientId=${identity.properties.clientId};Authorization=AAD'
  // DefaultAzureCredential in the handler picks the user-assigned identity by this client id.
  AZURE_CLIENT_ID: identity.properties.clientId
  ServiceBusConnection__fullyQualifiedNamespace: serviceBusFullyQualifiedNamespace
  ServiceBusConnection__credential: 'managedidentity'
  ServiceBusConnection__clientId: identity.properties.clientId
  CosmosDBConnection__accountEndpoint: cosmosEndpoint
  CosmosDBConnection__credential: 'managedidentity'
  CosmosDBConnection__clientId: identity.properties.clientId
  COSMOS_ENDPOINT: cosmosEndpoint
  COSMOS_DATABASE: cosmosDatabaseName
  COSMOS_CONTAINER: cosmosContainerName
  // The HTTP API (SubmitOrder, GetOrder; docs/contract.md §2, docs/adr/0011-idempotency-
  // key-scope-and-ttl.md). IDEMPOTENCY_KEY_TTL, IDEMPOTENCY_LEASE and SUBMIT_DEADLINE keep the
  // handler's defaults; a value set here must pass the handler's start checks (internal/clocks),
  // which tools/bicepcheck applies before deploying.
  IDEMPOTENCY_CONTAINER: idempotencyContainerName
  RETRY_BUDGET_DELIVERY_COUNT: string(retryBudgetDeliveryCount)
  'AzureWebJobs.ProcessOrder.Disabled': enableBatchFunction ? 'true' : 'false'
  'AzureWebJobs.ProcessOrderBatch.Disabled': enableBatchFunction ? 'false' : 'true'
}

// Elastic Premium only. Flex Consumption rejects these: its runtime comes from functionAppConfig
// and its package from the deployment container.
// No WEBSITE_CONTENTAZUREFILECONNECTIONSTRING / WEBSITE_CONTENTSHARE: the Azure Files content
// share accepts only an account key. Without it the app must run from an external package URL,
// here a private blob read with the managed identity; bicep/deploy/publish.sh uploads it.
var premiumSettings = {
  FUNCTIONS_WORKER_RUNTIME: 'custom'
  FUNCTIONS_EXTENSION_VERSION: '~4'
  WEBSITE_RUN_FROM_PACKAGE: '${packageContainerUrl}/current.zip'
  WEBSITE_RUN_FROM_PACKAGE_BLOB_MI_RESOURCE_ID: identity.id
}

resource plan 'Microsoft.Web/serverfarms@2024-04-01' = {
  name: planName
  location: location
  tags: tags
  kind: isFlex ? 'functionapp' : 'elastic'
  sku: isFlex ? {
    name: 'FC1'
    tier: 'FlexConsumption'
  } : {
    name: elasticPremiumSku
    tier: 'ElasticPremium'
  }
  properties: {
    reserved: true
    maximumElasticWorkerCount: isFlex ? null : maximumElasticWorkerCount
  }
}

var flexConfig = {
  deployment: {
    storage: {
      type: 'blobContainer'
      value: packageContainerUrl
      authentication: {
        type: 'UserAssignedIdentity'
        userAssignedIdentityResourceId: identity.id
      }
    }
  }
  scaleAndConcurrency: {
    maximumInstanceCount: flexMaximumInstanceCount
    instanceMemoryMB: flexInstanceMemoryMB
  }
  runtime: {
    name: 'custom'
    version: '1.0'
  }
}

// Flex Consumption rejects Site.SiteConfig.FtpsState (ARM error 51021 in the regions that
// enforce it) and manages HTTP/2 itself; Microsoft's Flex templates send only minTlsVersion.
// FTP is off on Flex anyway, and the basic-auth policies below refuse FTP on both plans.
var flexSiteConfig = {
  minTlsVersion: '1.2'
}

// With VNet integration the scale controller cannot reach the triggers' sources, so Elastic
// Premium would never scale out beyond the prewarmed instance: runtime scale monitoring lets
// the running host report the backlog instead (it reads the orders queue's runtime properties,
// which the app's Data Owner role allows; ADR 0008). Flex rejects the property (ARM error 51021).
var premiumSiteConfig = {
  minTlsVersion: '1.2'
  ftpsState: 'Disabled'
  http20Enabled: true
  functionsRuntimeScaleMonitoringEnabled: vnetIntegrated
}

resource site 'Microsoft.Web/sites@2024-04-01' = {
  name: name
  location: location
  // bicep/deploy/*.sh read these tags to choose how to publish and where the packages live.
  tags: union(tags, {
    'orders-hosting-plan': hostingPlan
    'orders-package-account': storage.name
    'orders-package-container': packageContainerName
    'orders-http-auth': easyAuthEnabled ? 'EntraID' : 'FunctionKeys'
  })
  kind: 'functionapp,linux'
  identity: {
    type: 'UserAssigned'
    userAssignedIdentities: {
      '${identity.id}': {}
    }
  }
  properties: {
    serverFarmId: plan.id
    reserved: true
    httpsOnly: true
    functionAppConfig: isFlex ? flexConfig : null
    // Outbound through the app subnet, so storage and Cosmos DB are reached on their private
    // endpoints. Elastic Premium routes only private ranges there unless vnetRouteAllEnabled;
    // Flex routes everything by itself, and Microsoft's Flex templates send only the subnet.
    virtualNetworkSubnetId: vnetIntegrated ? appSubnetId : null
    vnetRouteAllEnabled: isFlex ? null : vnetIntegrated
    siteConfig: isFlex ? flexSiteConfig : premiumSiteConfig
  }
}

resource appSettings 'Microsoft.Web/sites/config@2024-04-01' = {
  parent: site
  name: 'appsettings'
  properties: union(commonSettings, isFlex ? {} : premiumSettings)
}

// App Service Authentication (Easy Auth) in front of the HTTP functions, when easyAuthClientId is
// given: a request without a valid Entra ID bearer token for the API is answered 401 by the
// platform before the host sees it, and the platform strips client-sent X-MS-CLIENT-PRINCIPAL-*
// headers and sets them from the token, so the handler can scope idempotency keys by principal.
// Function keys stay required behind it (authLevel function): the two layers are independent.
// No client secret: validating bearer tokens needs only the client id and the issuer; the token
// store is off because the app never calls anything on the caller's behalf.
// Both plans: the refusal on Flex Consumption came from the preview documentation; what to
// verify in a test subscription before relying on it there is in docs/deploy.md, and make
// deploy's health wait fails when the home page answers 200 instead of 401.
var easyAuthEnabled = !empty(easyAuthClientId)

resource authSettings 'Microsoft.Web/sites/config@2024-04-01' = if (easyAuthEnabled) {
  parent: site
  name: 'authsettingsV2'
  properties: {
    platform: {
      enabled: true
    }
    globalValidation: {
      requireAuthentication: true
      unauthenticatedClientAction: 'Return401'
    }
    httpSettings: {
      requireHttps: true
    }
    identityProviders: {
      azureActiveDirectory: {
        enabled: true
        registration: {
          clientId: easyAuthClientId
          openIdIssuer: '${environment().authentication.loginEndpoint}${tenant().tenantId}/v2.0'
        }
        validation: {
          allowedAudiences: empty(easyAuthAllowedAudiences) ? [
            'api://${easyAuthClientId}'
          ] : easyAuthAllowedAudiences
          defaultAuthorizationPolicy: {
            allowedApplications: easyAuthAllowedClientApplications
          }
        }
      }
    }
    login: {
      tokenStore: {
        enabled: false
      }
    }
  }
}

// Publishing uses Entra tokens (Core Tools, az CLI); basic-auth publishing credentials stay off.
resource scmBasicAuth 'Microsoft.Web/sites/basicPublishingCredentialsPolicies@2023-12-01' = {
  parent: site
  name: 'scm'
  properties: {
    allow: false
  }
}

resource ftpBasicAuth 'Microsoft.Web/sites/basicPublishingCredentialsPolicies@2023-12-01' = {
  parent: site
  name: 'ftp'
  properties: {
    allow: false
  }
}

output name string = site.name
output id string = site.id
output defaultHostName string = site.properties.defaultHostName
output httpAuth string = easyAuthEnabled ? 'EntraID' : 'FunctionKeys'
