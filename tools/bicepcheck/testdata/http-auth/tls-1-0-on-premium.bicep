// want: siteConfig.minTlsVersion is "1.0" in premiumSiteConfig
param name string
param hostingPlan string

var isFlex = hostingPlan == 'FlexConsumption'

var flexSiteConfig = {
  minTlsVersion: '1.2'
}

var premiumSiteConfig = {
  minTlsVersion: '1.0'
  ftpsState: 'Disabled'
}

resource site 'Microsoft.Web/sites@2024-04-01' = {
  name: name
  location: 'westeurope'
  kind: 'functionapp,linux'
  properties: {
    httpsOnly: true
    functionAppConfig: isFlex ? {} : null
    siteConfig: isFlex ? flexSiteConfig : premiumSiteConfig
  }
}
