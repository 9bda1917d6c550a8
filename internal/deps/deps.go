package deps

import (
	_ "github.com/Shopify/toxiproxy/v2"
	_ "github.com/Shopify/toxiproxy/v2/client"
	_ "github.com/jackc/pgx/v5/pgxpool"
	_ "github.com/spf13/cobra"
	_ "github.com/tsenart/vegeta/v12/lib"
	_ "golang.org/x/term"
	_ "k8s.io/api/core/v1"
	_ "k8s.io/apimachinery/pkg/apis/meta/v1"
	_ "k8s.io/client-go/informers"
	_ "k8s.io/client-go/kubernetes"
	_ "k8s.io/client-go/kubernetes/fake"
	_ "k8s.io/client-go/tools/clientcmd"
	_ "k8s.io/client-go/tools/portforward"
	_ "sigs.k8s.io/e2e-framework/klient/decoder"
	_ "sigs.k8s.io/e2e-framework/pkg/env"
	_ "sigs.k8s.io/e2e-framework/pkg/envconf"
	_ "sigs.k8s.io/e2e-framework/pkg/features"
	_ "sigs.k8s.io/yaml"
)
