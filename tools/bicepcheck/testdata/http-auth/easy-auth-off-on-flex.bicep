// want: platform.enabled must be true on every plan
param name string
param hostingPlan string
param clientId string

var isFlex = hostingPlan == 'FlexConsumption'

resource site 'Microsoft.Web/sites@2024-04-01' = {
  name: name
  location: 'westeurope'
  kind: 'functionapp,linux'
  properties: {
    httpsOnly: true
    functionAppConfig: isFlex ? {} : null
    siteConfig: {
      minTlsVersion: '1.2'
    }
  }
}

resource authSettings 'Microsoft.Web/sites/config@2024-04-01' = {
  parent: site
  name: 'authsettingsV2'
  properties: {
    platform: {
      enabled: !isFlex
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
          clientId: clientId
        }
        validation: {
          allowedAudiences: [
            'api://${clientId}'
          ]
        }
      }
    }
  }
}
